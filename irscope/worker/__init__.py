"""The user's file runs in a worker process of its own; the command line and the terminal UI are front ends.

The worker owns torch, Triton, the capture, the compiles and the analyses. It sees no terminal: its stdin is
/dev/null, its stdout and stderr (file descriptors 1 and 2, so `os.system` and C extensions too) go to a file
the front end keeps as "the file's output", and irscope's own answer goes back over a pipe of its own. It
runs in a process group of its own and dies with its front end (a signal, a crash, or the front end's exit),
taking its compile children and its temporary folder with it. Nothing here imports torch.
"""
