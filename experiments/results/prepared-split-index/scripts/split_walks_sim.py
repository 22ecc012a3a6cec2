# CPU simulation of split_fused_kernel's index walks: the old (division / recomputed) and new (incremental) forms
# must visit the same (source, band) pairs in the same order for every thread.
import random, itertools
def band_of(g, target=48*1024):
    c,h,w,s,ct,ph,pw,h2,w2,cs = g
    if s>1:
        cpad=ct; wp=max(w2*s, w+pw)
        while wp*cpad%4: wp+=1
    else:
        cpad=2*cs+2; wp=w
    row_bytes=s*wp*cpad*4
    rows=max((h2+15)//16, min(h2, target//row_bytes))
    blocks=(h2+rows-1)//rows; rows=(h2+blocks-1)//blocks
    return blocks,rows,cpad,wp
def check(g, T, target):
    c,h,w,s,ct,ph,pw,h2,w2,cs = g
    blocks,rows,cpad,wp = band_of(g,target)
    hw=h*w; bad=0
    for bx in range(blocks):
        Y0=bx*rows; Y1=min(Y0+rows,h2); used=max(Y1-Y0,0)
        y_lo=Y0*s-ph; r_lo=max(y_lo,0); r_hi=min(y_lo+used*s,h); rows_in=max(r_hi-r_lo,0)
        for tid in range(T):
            if rows_in>0:
                total=rows_in*w*c; seg=rows_in*w; dc=T//seg; dj=T-dc*seg
                cc=tid//seg; j=tid-cc*seg
                old=[];new=[]
                if s>1:
                    row=j//w; x=j-row*w; drow=dj//w; dx=dj-drow*w
                    # old
                    r_,x_,c_=row,x,cc
                    for i in range(tid,total,T):
                        old.append(((r_*wp+x_)*cpad+c_, c_*hw+r_*w+x_))
                        x_+=dx; r_+=drow
                        if x_>=w: x_-=w; r_+=1
                        c_+=dc
                        if r_>=rows_in: r_-=rows_in; c_+=1
                    go=cc*hw+j; so=(row*wp+x)*cpad+cc
                    dgo=dc*hw+dj; dso=(drow*wp+dx)*cpad+dc; xw_so=(wp-w)*cpad; rw_go=hw-rows_in*w; rw_so=1-rows_in*wp*cpad
                    r_,x_=row,x
                    for i in range(tid,total,T):
                        new.append((so,go))
                        x_+=dx; r_+=drow; go+=dgo; so+=dso
                        if x_>=w: x_-=w; r_+=1; so+=xw_so
                        if r_>=rows_in: r_-=rows_in; go+=rw_go; so+=rw_so
                else:
                    c_,j_=cc,j
                    for i in range(tid,total,T):
                        old.append((j_*cpad+c_, c_*hw+j_)); c_+=dc; j_+=dj
                        if j_>=seg: j_-=seg; c_+=1
                    go=cc*hw+j; so=j*cpad+cc; dgo=dc*hw+dj; dso=dj*cpad+dc; w_go=hw-seg; w_so=1-seg*cpad
                    j_=j
                    for i in range(tid,total,T):
                        new.append((so,go)); j_+=dj; go+=dgo; so+=dso
                        if j_>=seg: j_-=seg; go+=w_go; so+=w_so
                bad+=old!=new
            # write
            old=[];new=[]
            if s>1:
                chunks=s*ct//4; per_pixel=s*chunks; steps=used*w2*per_pixel
                dq=T//per_pixel; dr=T-dq*per_pixel
                k=tid%per_pixel; pp=tid//per_pixel; yl=pp//w2; x=pp-yl*w2
                k_,yl_,x_=k,yl,x
                for i in range(tid,steps,T):
                    r=k_//chunks; q=k_-r*chunks
                    old.append((i,(((yl_*s+r)*wp+x_*s)*cpad)//4+q))
                    k_+=dr; st=dq
                    if k_>=per_pixel: k_-=per_pixel; st+=1
                    x_+=st
                    while x_>=w2: x_-=w2; yl_+=1
                dr_r=dr//chunks; dr_q=dr-dr_r*chunks; RW=wp*cpad//4; PX=s*cpad//4
                assert wp*cpad%4==0 and s*cpad%4==0
                r=k//chunks; q=k-r*chunks; so4=(yl*s+r)*RW+x*PX+q
                dso4=dr_r*RW+dr_q+dq*PX; qw=RW-chunks; rw=PX-s*RW; xw=s*RW-w2*PX
                x_=x
                for i in range(tid,steps,T):
                    new.append((i,so4))
                    q+=dr_q; r+=dr_r; x_+=dq; so4+=dso4
                    if q>=chunks: q-=chunks; r+=1; so4+=qw
                    if r>=s: r-=s; x_+=1; so4+=rw
                    while x_>=w2: x_-=w2; so4+=xw
            else:
                words=used*w2*cs; dq=T//cs; dr=T-dq*cs
                wd=tid%cs; pp=tid//cs; yl=pp//w2; x=pp-yl*w2
                wd_,yl_,x_=wd,yl,x
                for i in range(tid,words,T):
                    old.append((i,(yl_*w+x_)*cpad+2*wd_))
                    wd_+=dr; st=dq
                    if wd_>=cs: wd_-=cs; st+=1
                    x_+=st
                    while x_>=w2: x_-=w2; yl_+=1
                so=tid//cs*cpad+2*wd; dso=dq*cpad+2*dr; w_so=cpad-2*cs
                for i in range(tid,words,T):
                    new.append((i,so)); wd+=dr; so+=dso
                    if wd>=cs: wd-=cs; so+=w_so
            bad+=old!=new
    return bad
cases={"conv1":(3,227,227,4,3,0,0,57,57,24),"conv2":(96,27,27,1,96,0,0,27,27,48),"conv3":(256,13,13,1,256,0,0,13,13,128),
"conv4":(384,13,13,1,384,0,0,13,13,192),"fc6":(9216,1,1,1,9216,0,0,1,1,4608),"vgg5":(512,14,14,1,512,0,0,14,14,256),
"s2dpad":(3,64,61,2,4,1,2,34,33,8),"chpad":(3,50,50,1,8,0,0,50,50,4),"odd":(40,9,7,1,40,0,0,9,7,20)}
random.seed(1)
for i in range(40):  # random small shapes, with and without the rewrite
    s=random.choice([1,1,2,3,4]); c=random.randint(1,40) if s==1 else random.randint(1,7)
    h=random.randint(1,40); w=random.randint(1,40)
    if s==1:
        cs=(c+1)//2 if random.random()<0.5 else (((c+7)//8*8)//2); cases[f"r{i}"]=(c,h,w,1,2*cs,0,0,h,w,cs)
    else:
        ct=c
        while s*s*ct%8: ct+=1
        if s*ct%4: continue
        k=random.randint(s,3*s); ph=random.randint(0,k//2); pw=random.randint(0,k//2)
        oh=(h+2*ph-k)//s+1; ow=(w+2*pw-k)//s+1
        if oh<1 or ow<1: continue
        kk=(k+s-1)//s; cases[f"r{i}"]=(c,h,w,s,ct,ph,pw,oh+kk-1,ow+kk-1,s*s*ct//2)
tot=0
for name,g in cases.items():
    for T in (256,512,1024):
        for tgt in (48*1024,0):
            b=check(g,T,tgt); tot+=b
            if b: print("MISMATCH",name,T,tgt,b)
print(len(cases),"shapes,", "all equal" if tot==0 else f"{tot} mismatches")
