"""ncu_lines.py K...: the warp-stall samples of K_cs.csv (ncu --import REPORT
--page source --print-source cuda,sass --csv, call 6) summed per CUDA source
line, with each line's two main stall reasons; run in the folder of the CSV
files. Nsight Compute 2025's CSV leaves quotes in the source text unescaped,
so a row is split on '","' and the source is what the fixed columns leave."""
import sys, collections
def parse(path):
    hdr=None; cur=None; out=[]
    for raw in open(path):
        raw=raw.rstrip('\n').rstrip(',')
        if raw.startswith('"File Path"'): cur=raw.split('","')[1].strip('"'); continue
        if raw.startswith('"Line No"'): hdr=[h.strip('"') for h in raw.split('","')]; continue
        if hdr is None or not raw.startswith('"'): continue
        parts=raw[1:-1].split('","')
        try: ln=int(parts[0])
        except: continue
        n=len(hdr)
        tail=parts[len(parts)-(n-2):]
        srcline='","'.join(parts[1:len(parts)-(n-2)])
        d=dict(zip(hdr[2:],tail))
        out.append((cur.split('/')[-1], ln, srcline, d))
    return out
for k in sys.argv[1:]:
    rows=parse(f"{k}_cs.csv")
    by=collections.Counter(); rs=collections.defaultdict(collections.Counter); src={}
    tot=0
    for f,ln,s,d in rows:
        v=float(d.get("Warp Stall Sampling (All Samples)") or 0); tot+=v
        by[(f,ln)]+=v; src[(f,ln)]=s
        for h,x in d.items():
            if h.startswith("stall_") and "Not Issued" not in h:
                try: rs[(f,ln)][h[6:]]+=float(x or 0)
                except: pass
    allr=collections.Counter()
    for c in rs.values(): allr.update(c)
    print(f"== {k}: {tot:.0f} samples; by reason: " + ", ".join(f"{h} {v/tot*100:.0f}%" for h,v in allr.most_common(6)))
    for key,v in by.most_common(20):
        top=rs[key].most_common(2)
        print(f"{v/tot*100:5.1f}% {key[0]}:{key[1]:<6} [{', '.join(f'{h} {x/v*100:.0f}%' for h,x in top if v)}] {src[key].strip()[:90]}")
