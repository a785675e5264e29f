"""Opens a run's .pvd with ParaView's readers and prints what it found (run by pvpython).
Usage: pvpython paraview_open.py RUN/vtk/NAME.pvd"""
import sys

from paraview import servermanager
from paraview.simple import OpenDataFile

reader = OpenDataFile(sys.argv[1])
times = reader.TimestepValues
for t in times:
    reader.UpdatePipeline(t)
data = servermanager.Fetch(reader)
radius = data.GetPointData().GetArray("radius")
last = data.GetPoint(data.GetNumberOfPoints() - 1)
print(f"points {data.GetNumberOfPoints()} lines {data.GetNumberOfLines()} frames {len(times)} "
      f"radius {radius.GetRange()[0]:.6g}..{radius.GetRange()[1]:.6g} "
      f"last point {last[0]:.9g} {last[1]:.9g} {last[2]:.9g}")
