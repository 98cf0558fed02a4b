"""The training workspace: form, corpus list, live plots and the training worker."""
