"""Forces written in Python (docs/python.md)."""


class PythonForce:
    """A force written in Python, for prototyping: fn(t, x, v) -> (n, 3) array of node forces (N) on
    rod `rod`, or None for none. x and v are (n, 3) arrays: the configuration being evaluated (m) and
    the velocities at the start of the step (m/s).

    every_evaluation=True: called at every force evaluation the solver makes (explicit solvers: once
    per step or stage; implicit ones: every Newton iteration, without a stiffness matrix, so Newton
    converges more slowly when the force is stiff). every_evaluation=False: called once per step at the
    start state and held through the step (explicit in time; cheap for implicit solvers).
    The slow path: docs/python.md gives its measured cost."""

    def __init__(self, name, fn, rod, every_evaluation=True):
        self.name, self.fn, self.rod, self.every_evaluation = name, fn, rod, bool(every_evaluation)
