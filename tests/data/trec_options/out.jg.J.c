map_avgjg             	all	0.5967
P_avgjg_5             	all	0.5283
P_avgjg_7             	all	0.5369
Rprec_mult_avgjg_0.50 	all	0.5381
Rprec_mult_avgjg_1.50 	all	0.5188
