# Check that docs/language.md's Builtins section names every builtin of
# frontend/builtins.def (in a `code span`); print the missing ones.
# Usage: builtins_documented.py BUILTINS_DEF LANGUAGE_MD
import re
import sys

names = []
for m in re.finditer(r'^FE_BUILTIN\(\s*\w+\s*,\s*"([^"]+)"', open(sys.argv[1]).read(), re.M):
    if m.group(1) not in names:
        names.append(m.group(1))
doc = open(sys.argv[2]).read()
start = doc.find("\n## Builtins")
end = doc.find("\n## ", start + 1)
section = doc[start:end if end > 0 else len(doc)] if start >= 0 else ""
section = re.sub(r"^```.*?^```", "", section, flags=re.S | re.M)  # examples do not count
spans = re.findall(r"`[^`]+`", section)
missing = [n for n in names if not any(re.search(r"\b%s\b" % re.escape(n), s) for s in spans)]
for n in missing:
    print("undocumented builtin: %s" % n)
print("%d builtins in the table, %d not in the docs" % (len(names), len(missing)))
sys.exit(1 if missing or not names else 0)
