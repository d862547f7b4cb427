# Data mining workload: the flow-size CDF of the VL2 paper (Greenberg et
# al., "VL2: A Scalable and Flexible Data Center Network", SIGCOMM 2009),
# as pFabric and PIAS use it.
# Source: https://github.com/HKUST-SING/PIAS-NS2 scripts/CDF_vl2.tcl
# (commit 5fb5867c229372c2310b0c197cbe757af83b66c4, 2016-05-10); the PIAS
# README calls it "data mining workload". The ns-2 file's middle column
# (always 1) is dropped here.
# Sampled as ns-2's RandomVariable/Empirical with interpolation_ 2, as the
# PIAS scripts set it: linear between the points, rounded up to a whole
# packet; half of all flows are a single packet, 1 % are over 66 667
# packets (97 MB), the largest 666 667 packets (973 MB). Mean 5 116.9
# packets (7.47 MB; the PIAS scripts use 5117*1460):
# experiments/sizes.py show datamining
unit 1460
interpolation integral
# packets cdf
1 0
1 0.5
2 0.6
3 0.7
7 0.8
267 0.9
2107 0.95
66667 0.99
666667 1
