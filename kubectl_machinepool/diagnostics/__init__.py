"""diagnose's rules, one module per family over core.py; rules.py gathers them and runs them."""
