# Top frames of a JFR recording: self (top of stack) and inclusive for frames matching the
# arguments after the count (default: io.kvrouter). Usage: jfr_top.py FILE.jfr [N] [substring...]
# Needs the JDK's `jfr` tool on the PATH. THREAD=<prefix> keeps only the samples of threads whose
# name starts with it (e.g. THREAD=kvrouter-pekko.actor.default-dispatcher).
import os, sys, re, collections, subprocess
f = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
out = subprocess.run(["jfr","print","--events","jdk.ExecutionSample","--stack-depth","200",f],capture_output=True,text=True).stdout
samples = out.split("jdk.ExecutionSample")
top = collections.Counter(); incl = collections.Counter(); total=0
only = os.environ.get("THREAD", "")
for s in samples:
    t = re.search(r'sampledThread = "([^"]*)"', s)
    if only and (not t or not t.group(1).startswith(only)): continue
    m = re.search(r"stackTrace = \[(.*?)\n\s*\]", s, re.S)
    if not m: continue
    frames = [re.sub(r"\s+line:.*","",l.strip()) for l in m.group(1).strip().split("\n") if l.strip() and l.strip()!="..."]
    if not frames: continue
    total += 1
    top[frames[0]] += 1
    seen=set()
    for fr in frames:
        if fr not in seen:
            incl[fr]+=1; seen.add(fr)
print("samples", total)
print("== top frames (self)")
for k,v in top.most_common(n): print(f"{100*v/total:5.1f}% {k}")
print("== inclusive (io.kvrouter / selected)")
for k,v in incl.most_common(400):
    if any(x in k for x in sys.argv[3:] ) if len(sys.argv)>3 else 'kvrouter' in k:
        print(f"{100*v/total:5.1f}% {k}")
