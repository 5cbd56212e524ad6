"""`irscope export FILE -o kernel.html`: one self-contained page of a compilation (page.py builds it)."""
