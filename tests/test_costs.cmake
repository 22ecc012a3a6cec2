# Included by CTest after the discovered gtest cases (tests/CMakeLists.txt): the slow ones' COST, in seconds on a
# 2-core machine, so that ctest -j starts them first on a fresh clone instead of last. (In CTest's script mode
# if(TEST) is always false, and a name that does not exist is ignored.)
set_tests_properties(Ece408.CpuRefReproducesPublishedCorrectness PROPERTIES COST 43)
set_tests_properties(Bvlc.SynthesisIsDeterministicAndHeScaled PROPERTIES COST 14)
set_tests_properties(Ece408.CpuReproducesPublishedCorrectness PROPERTIES COST 8)
set_tests_properties(Zoo.ZfnetHasThePapersFeatureMapsAndHeWeights PROPERTIES COST 5)
