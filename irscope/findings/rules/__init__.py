"""The findings rules, one module per kind of cost."""
