#!/usr/bin/env python3
# compare.py DIR [REGIME...]: after/before topocoll time and native/topocoll ratios, medians over the rounds.
import sys
import csv,glob,statistics as st,collections
d=collections.defaultdict(list)  # (b,coll,regime,bytes) -> list of (native,topo)
for f in glob.glob(sys.argv[1] + '/*.csv'):
    b,coll,regime,rnd=f.split('/')[-1][:-4].split('-')
    for r in csv.DictReader(open(f)):
        d[(b,coll,regime,int(r['bytes']))].append((float(r['native_us']),float(r['topocoll_us'])))
sizes=sorted({k[3] for k in d})
def fmt(n):
    for u,s in (('M',20),('K',10)):
        if n>=1<<s: return '%d%s'%(n>>s,u)
    return '%dB'%n
out=[]
for regime in sys.argv[2:] or ['warm','cold']:
  for coll in ['bcast','reduce','allreduce','allgather']:
    row=[];rat=[]
    for n in sizes:
        a=d.get(('after',coll,regime,n)); b=d.get(('before',coll,regime,n))
        if not a or not b: continue
        ta=st.median(x[1] for x in a); tb=st.median(x[1] for x in b)
        ra=st.median(x[0]/x[1] for x in a); rb=st.median(x[0]/x[1] for x in b)
        row.append((n,ta/tb,ra,rb))
    out.append((regime,coll,row))
for regime,coll,row in out:
    print('%s %s: after/before topocoll time (median over the rounds)'%(regime,coll))
    print('  '+' '.join('%s:%.2f'%(fmt(n),x) for n,x,_,_ in row))
    print('  ratio native/topocoll before -> after: '+' '.join('%s:%.2f>%.2f'%(fmt(n),rb,ra) for n,_,ra,rb in row))
