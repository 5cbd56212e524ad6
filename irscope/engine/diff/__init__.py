"""Two compilations of one kernel, compared by source line (`irscope diff`)."""
