"""cmp.py TRACE A.picks B.picks: first divergence, agreeing decisions, block hit rate of each
(leading trace blocks already sent to the chosen replica, unlimited caches)."""
import json,sys
T=sys.argv[1]; a=open(sys.argv[2]).read().split(); b=open(sys.argv[3]).read().split()
reqs=[json.loads(l) for l in open(T)][:len(a)]
def hit(picks):
    held=[set() for _ in range(64)]; h=0; tot=0
    for r,p in zip(reqs,picks):
        p=int(p); k=0
        for x in r['hash_ids']:
            if x in held[p]: k+=1
            else: break
        h+=k; tot+=len(r['hash_ids']); held[p].update(r['hash_ids'])
    return h/tot
first=next((i for i,(x,y) in enumerate(zip(a,b)) if x!=y), None)
same=sum(x==y for x,y in zip(a,b))
print("n",len(a),len(b),"first divergence",first,"same",same,"hit java %.3f python %.3f"%(hit(a),hit(b)))
