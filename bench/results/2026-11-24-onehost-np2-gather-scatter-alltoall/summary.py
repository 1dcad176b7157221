import csv,glob,statistics as st,collections,sys
d=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/run*/*.csv'):
    coll,_,regime=f.split('/')[-1][:-4].split('_')
    for r in csv.DictReader(open(f)):
        d[(coll,regime,int(r['bytes']))].append(float(r['ratio']))
def fmt(n):
    for u,s in (('M',20),('K',10)):
        if n>=1<<s: return '%d%s'%(n>>s,u)
    return '%dB'%n
for coll in ['gather','scatter','alltoall']:
    for regime in ['warm','cold']:
        ks=sorted(k[2] for k in d if k[0]==coll and k[1]==regime)
        print('%s %s: '%(coll,regime)+' '.join('%s:%.2f[%.2f-%.2f]'%(fmt(n),st.median(d[(coll,regime,n)]),min(d[(coll,regime,n)]),max(d[(coll,regime,n)])) for n in ks))
