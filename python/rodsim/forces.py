"""Forces written in Python (docs/python.md, "Forces in Python")."""


class PythonForce:
    """A force written in Python on rod `rod`: fn(t, x, v) is called with the time (s), the (n, 3)
    node positions being evaluated (m) and (n, 3) node velocities (m/s), and returns

      None                      no force;
      an (n, 3) array           node forces (N, world frame);
      a dict with any of
        "forces"   (n, 3)       node forces, N;
        "couples"  (n-1, 3)     a couple on edge k (nodes k, k+1; Cosserat: element k; a closed
                                ring's closing element takes none), N m, world frame. On a
                                Cosserat rod it acts on the element's rotation; on a DER rod its part
                                along the tangent t acts on the edge's twist angle and the rest
                                C_perp as the force pair C_perp x t / |e| on the edge's end nodes
                                (+ on node k+1, - on node k), which has moment C_perp about node k;
        "dfdx"                  dF/dx, the derivative of the returned forces with respect to the
                                positions (N/m; row 3i+c: component c of node i's force, column 3j+d:
                                coordinate d of node j), as a dense (3n, 3n) array, (n, 3, 3) node
                                blocks dF_i/dx_i, a scipy.sparse matrix (anything with .tocoo()), or
                                a triple (rows, cols, values) of 1-D arrays (duplicates add up);
        "dfdv"                  dF/dv in the same forms (N s/m); needs velocity="step".

    The Jacobians are of the force itself (a spring pulling node i to a point p with stiffness k:
    F_i = -k (x_i - p), dfdx = -k I): implicit solvers add -dfdx - dfdv / dt to their K = -dF/dq, so
    Newton converges as with a C++ force that has its stiffness. Without them the force enters each
    Newton iteration as a constant (correct, but Newton converges linearly when the force is stiff).
    Couples have no Jacobian.

    every_evaluation=True: called at every force evaluation (explicit solvers: once per step or
    stage; Newton: every iteration). every_evaluation=False: called once per step at the start state
    and held through the step (explicit in time; then no Jacobian).
    velocity="start": v is the velocity at the start of the step (the committed one). velocity="step":
    v is the step's velocity, as the `damping` plugin sees it: (x - x_start) / dt under implicit
    solvers (so it changes with every Newton iterate, and "dfdv" applies), the current velocity in
    explicit ones, 0 in static solves; the force is then velocity-dependent (explicit solvers integrate
    it over their kicks)."""

    def __init__(self, name, fn, rod, every_evaluation=True, velocity="start"):
        if not callable(fn):
            raise TypeError(f"PythonForce '{name}': fn must be callable, not {type(fn).__name__}")
        if velocity not in ("start", "step"):
            raise ValueError(f"PythonForce '{name}': velocity must be \"start\" or \"step\", not {velocity!r}")
        if velocity == "step" and not every_evaluation:
            raise ValueError(f"PythonForce '{name}': velocity=\"step\" needs every_evaluation=True (a force "
                             "called once per step sees the start of the step only)")
        self.name, self.fn, self.rod = str(name), fn, str(rod)
        self.every_evaluation, self.velocity = bool(every_evaluation), velocity

    def _spec(self):
        """What the extension's Simulation takes (rodsim._PythonForceSpec)."""
        from ._rodsim import _PythonForceSpec
        return _PythonForceSpec(self.name, self.rod, self.fn, self.every_evaluation, self.velocity == "step")

    def __repr__(self):
        return (f"<rodsim.PythonForce {self.name!r} on rod {self.rod!r}, every_evaluation={self.every_evaluation}, "
                f"velocity={self.velocity!r}>")
