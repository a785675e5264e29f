"""No second reader or writer of a run's own files (summary.json, timeseries.csv, final.csv).

C++ reads and writes them with libs/run_record, Python with python/rodsim/output.py (the plotting
scripts through scripts/rodsim_output.py). Exits 1 naming FILE:LINE for
 - the old hand-written helpers (substring JSON fields, comma splitting, JSON escapers) anywhere
   outside libs/run_record;
 - a line that opens or parses one of those files itself (the csv or json module, open(),
   ifstream, getline, std::stod, atof, loadtxt, pandas) in kernel/, studies/, viz/, app/, python/,
   scripts/, benchmarks/ or tests/.
Usage: check_one_reader.py REPOSITORY
"""
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
FOLDERS = ["kernel", "studies", "viz", "app", "python", "scripts", "benchmarks", "tests", "plugins"]
ALLOWED = {"python/rodsim/output.py", "tests/support/csv_table.h", "tests/libs/run_record/test_run_record.cpp",
           "tests/libs/run_record/check_one_reader.py"}
HELPERS = re.compile(r"(jsonRawField|splitCsv|summaryField|std::string jsonEscape\(|std::string jsonString\(|"
                     r"double jsonNumber\(const std::string& json|double parseNumber\(const std::string& s\))")
RUN_FILE = re.compile(r"(timeseries\.csv|final\.csv|summary\.json)")
PARSING = re.compile(r"(csv\.reader|csv\.DictReader|json\.loads?\(|loadtxt|genfromtxt|read_csv\(|ifstream|getline|"
                     r"std::stod|atof|\bopen\()")

problems = []
for folder in FOLDERS:
    for path in sorted((ROOT / folder).rglob("*")):
        if path.suffix not in (".cpp", ".h", ".py") or not path.is_file():
            continue
        name = path.relative_to(ROOT).as_posix()
        if name in ALLOWED:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            helper = HELPERS.search(line)
            if helper:
                problems.append(f"{name}:{n}: a reader or writer of a run's files of its own ({helper.group(1)}): "
                                "use libs/run_record")
                continue
            run_file, parsing = RUN_FILE.search(line), PARSING.search(line)
            if run_file and parsing:
                problems.append(f"{name}:{n}: reads a run's {run_file.group(1)} itself ({parsing.group(1)}): use "
                                "libs/run_record (C++) or rodsim_output / rodsim.read_output (Python)")
if problems:
    print("second readers of a run's files:\n" + "\n".join(problems))
    sys.exit(1)
print("one reader and writer of a run's files: libs/run_record and python/rodsim/output.py")
