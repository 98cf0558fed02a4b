"""The training workspace: form, corpus list and live plots (the plan it runs is the core's, :mod:`bpeinspect.core.train.plan`)."""
