"""A nonholonomic vehicle for RDP in a module of its own, named by
examples/scenes/own_differential_drive.json ("system": {"module":
"../systems/differential_drive.py"}, docs/own-system.md): the differential-drive robot of
examples/python/differential_drive.py, its centre of mass 5 cm ahead of the axle."""

from marsden.symbolic import rdp

robot = rdp.differential_drive(d=0.05)
