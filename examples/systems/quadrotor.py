"""A symbolic system in a module of its own, named by scene and problem files
(examples/scenes/own_quadrotor.json, examples/problems/own_quadrotor_window.json:
"system": {"module": "../systems/quadrotor.py"}, docs/own-system.md). The reader runs this
file and uses the one symbolic object it defines: the quadrotor of
examples/python/own_quadrotor.py, in a 2 m/s wind, from marsden.symbolic's zoo."""

from marsden import symbolic as sym

quad = sym.quadrotor(wind=(2.0, -1.0, 0.0), linear_damping=0.3, angular_damping=0.002)
