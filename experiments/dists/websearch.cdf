# Web search workload: the flow-size CDF of the DCTCP paper (Alizadeh et al.,
# "Data Center TCP", SIGCOMM 2010), as pFabric, PIAS and Homa use it.
# Source: https://github.com/HKUST-SING/PIAS-NS2 scripts/CDF_dctcp.tcl
# (commit 5fb5867c229372c2310b0c197cbe757af83b66c4, 2016-05-10); the same
# table is in /work/shared/notes/size-based-scheduling.md. The ns-2 file's
# middle column (always 1) is dropped here.
# Sampled as ns-2's RandomVariable/Empirical with interpolation_ 2, as the
# PIAS scripts set it: linear between the points, rounded up to a whole
# packet; a repeated size is a point mass (15 % of flows are 6 packets).
# Mean 1 141.4 packets (1.67 MB; without rounding up 1 141.0; the PIAS
# scripts' 1138*1460): experiments/sizes.py show websearch
unit 1460
interpolation integral
# packets cdf
6 0
6 0.15
13 0.2
19 0.3
33 0.4
53 0.53
133 0.6
667 0.7
1333 0.8
3333 0.9
6667 0.97
20000 1
