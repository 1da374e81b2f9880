"""The real ``claude`` CLI in tmux: the backend (the only code that runs tmux), the screen's markers, boot, send
and finding the binary. It never reads a verdict and never judges a trial.
"""
