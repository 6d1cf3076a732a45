map                   	all	0.3051
