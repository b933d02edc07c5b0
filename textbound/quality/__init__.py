"""Quality: evaluation, calibration, the teacher's report and plots."""
