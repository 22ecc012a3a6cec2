// Probe: hardware counters of one thread of a running process over an interval (no `perf` on the GPU machines).
// Usage: thread_counters TID SECONDS. Prints cycles, instructions, IPC, cache references and misses, and the
// thread's context switches, counted in user and kernel mode. Used on the main thread of a profiled batch-1 sweep to
// tell whether the profiler's slow processes do more work per pass or the same work more slowly
// (experiments/profiler-overhead.md). Build: cc -O2 thread_counters.c -o thread_counters
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_counter(pid_t tid, uint32_t type, uint64_t config) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = type;
  a.config = config;
  a.disabled = 1;
  return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, 0);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: thread_counters TID SECONDS\n");
    return 2;
  }
  const pid_t tid = (pid_t)atoi(argv[1]);
  const double seconds = atof(argv[2]);
  const struct { const char* name; uint32_t type; uint64_t config; } c[] = {
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
      {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
      {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
      {"task-clock-ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
      {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
      {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
  };
  const int n = sizeof c / sizeof c[0];
  int fd[16];
  for (int i = 0; i < n; ++i) {
    fd[i] = open_counter(tid, c[i].type, c[i].config);
    if (fd[i] < 0) perror(c[i].name);
    else ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0);
  }
  usleep((useconds_t)(seconds * 1e6));
  uint64_t v[16] = {0};
  for (int i = 0; i < n; ++i)
    if (fd[i] >= 0) {
      ioctl(fd[i], PERF_EVENT_IOC_DISABLE, 0);
      if (read(fd[i], &v[i], sizeof v[i]) != sizeof v[i]) v[i] = 0;
    }
  for (int i = 0; i < n; ++i) printf("%s=%llu ", c[i].name, (unsigned long long)v[i]);
  printf("ipc=%.3f\n", v[0] ? (double)v[1] / (double)v[0] : 0.0);
  return 0;
}
