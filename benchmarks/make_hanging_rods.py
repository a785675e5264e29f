import sys
n = 100
out = []
out.append('''# 100 Cosserat cantilevers of 100 elements each (10 000 elements in all, as the 10 000-element
# Timoshenko beam in one rod), clamped at one end and released horizontal under gravity: the many-rods
# case of the threads benchmark (benchmarks/README.md, "Threads"). Position-verlet, no contact (the rods
# are 5 cm apart and swing in parallel planes). Young's modulus grows from 1 to 2 MPa across the rows
# so that no two rods move alike. Written by benchmarks/make_hanging_rods.py (dt: 0.6 x the stability limit the solver estimates, 1.77e-4 s).
[simulation]
duration = 1.0
dt = 1e-4

[solver]
type = "position-verlet"

[[force]]
type = "gravity"

[[force]]
name = "air"
type = "damping"
coefficient = 0.05
''')
for i in range(n):
    y = 0.05 * i
    E = 1e6 * (1 + i / (n - 1))
    out.append(f'''[[rod]]
name = "rod{i}"
model = "cosserat"
nodes = 101
radius = 0.01
density = 1000.0
youngs_modulus = {E!r}
geometry = {{ shape = "straight", start = [0, {y!r}, 0], end = [1, {y!r}, 0] }}

[[constraint]]
name = "clamp{i}"
type = "cosserat-clamp"
rod = "rod{i}"
nodes = [0]
elements = [0]
''')
out.append('''[output]
every = 0.0
formats = ["csv"]
''')
sys.stdout.write("\n".join(out))
