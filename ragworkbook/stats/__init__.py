"""Statistics for small eval sets: resampling (bootstrap, paired tests), rater agreement, and corrections of a
judge's scores for its measured error (Rogan-Gladen, prediction-powered inference)."""
