"""Statistics for small eval sets: resampling (bootstrap, paired tests) and rater agreement."""
