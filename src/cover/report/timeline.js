// Timelines of one query as inline SVG (truth, prediction, the certified region of each
// family, relevance signal with the calibrated SLS cut) and the per-query search box.
const FAM={fam};const TRUTH='{truth}',PRED='{pred}';
function esc(s){return String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));}
function timeline(q,meta){
 const W=980,L=92,R=104,T=q.duration,sx=t=>L+(W-L-R)*t/T;
 const fams=Object.keys(q.regions);const REL=q.relevance;const hasRel=REL.q.length>0;
 const rowH=22,relH=hasRel?70:0,H=30+rowH*(2+fams.length)+relH+28;let y=18,s='';
 function lane(label,ivs,color,extra){s+=`<text x="4" y="${y+14}" font-size="12">${label}</text>`;
  s+=`<rect x="${L}" y="${y+3}" width="${W-L-R}" height="14" fill="#f3f3f3"/>`;
  for(const [a,b] of ivs){s+=`<rect x="${sx(a)}" y="${y+3}" width="${Math.max(sx(b)-sx(a),1.5)}" height="14" fill="${color}"/>`;}
  if(extra)s+=`<text x="${W-R+6}" y="${y+14}" font-size="11" fill="${extra.startsWith('MISSES')?'#B34700':'#333'}">${extra}</text>`;y+=rowH;}
 lane('truth',q.truth,TRUTH,'');
 lane('prediction',q.pred?[q.pred]:[],PRED,q.pred?`IoU ${q.point_iou.toFixed(2)}`:'refused');
 for(const f of fams){const cov=q.covered[f];
  lane(FAM[f].label+' region',q.regions[f],FAM[f].color,cov?'covers truth':'MISSES truth');}
 if(hasRel){const v=REL.q.map(x=>REL.lo+x*(REL.hi-REL.lo)/99);
  const cut=('sls' in meta.thresholds&&typeof meta.thresholds.sls==='number')?-meta.thresholds.sls:null;
  const lo=Math.min(REL.lo,cut===null?REL.lo:cut),hi=Math.max(REL.hi,cut===null?REL.hi:cut);
  const top=y+6,bot=y+relH-6,sy=x=>bot-(bot-top)*(x-lo)/((hi-lo)||1);
  s+=`<text x="4" y="${top+12}" font-size="12">relevance</text>`;
  let d='';v.forEach((x,i)=>{const a=sx(Math.min(i*meta.clip,T)),b=sx(Math.min((i+1)*meta.clip,T));
   d+=(i?'L':'M')+a+','+sy(x)+'L'+b+','+sy(x);});
  s+=`<path d="${d}" fill="none" stroke="#009E73" stroke-width="1.3"/>`;
  if(cut!==null){const c=cut;s+=`<line x1="${L}" x2="${W-R}" y1="${sy(c)}" y2="${sy(c)}" stroke="#333" stroke-dasharray="4 3"/>`;
   s+=`<text x="${W-R+6}" y="${sy(c)+4}" font-size="11">SLS cut ${c.toFixed(2)}</text>`;}
  y+=relH;}
 const ticks=6;for(let i=0;i<=ticks;i++){const t=T*i/ticks;
  s+=`<line x1="${sx(t)}" x2="${sx(t)}" y1="${y+2}" y2="${y+6}" stroke="#555"/><text x="${sx(t)}" y="${y+18}" font-size="11" text-anchor="middle">${t.toFixed(0)}</text>`;}
 s+=`<text x="${W-R+24}" y="${y+18}" font-size="11">time (s)</text>`;
 return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H+12}" width="${W}" role="img" aria-label="timeline of query ${esc(q.qid)}">${s}</svg>`;}
function head(q,pairLabel){return `<div class="tl-head"><b>${esc(pairLabel)}</b>, qid ${esc(q.qid)}, video ${esc(q.vid)} (${q.duration.toFixed(0)} s): <i>${esc(q.query)}</i></div>`;}
function draw(el){const p=DATA[el.dataset.pair],q=p.rows[+el.dataset.row];
 el.innerHTML=head(q,p.label)+timeline(q,p);}
document.querySelectorAll('.timeline[data-pair]').forEach(draw);
function fillTable(){const tb=document.querySelector('#qtable tbody');if(!tb)return [];
 const fams=document.getElementById('qtable').dataset.families.split(',').filter(x=>x);
 const html=[];for(const [pid,p] of Object.entries(DATA)){p.rows.forEach((q,i)=>{
  let c=[p.label,q.qid,q.query,q.duration.toFixed(0),q.pred?q.point_iou.toFixed(2):'refused'];
  for(const f of fams){if(f in q.regions){const L=q.regions[f].reduce((a,[s,e])=>a+e-s,0);
   c.push(L.toFixed(0),q.covered[f]?'yes':'NO');}else c.push('--','--');}
  html.push(`<tr data-pair="${esc(pid)}" data-row="${i}">`+c.map(x=>`<td>${esc(x)}</td>`).join('')+'</tr>');});}
 tb.innerHTML=html.join('');return [...tb.querySelectorAll('tr')];}
const box=document.getElementById('qsearch');
if(box){const rows=fillTable();
 box.addEventListener('input',()=>{const t=box.value.toLowerCase();
  rows.forEach(r=>{r.style.display=r.textContent.toLowerCase().includes(t)?'':'none';});});
 rows.forEach(r=>r.addEventListener('click',()=>{const el=document.getElementById('qview');
  el.dataset.pair=r.dataset.pair;el.dataset.row=r.dataset.row;draw(el);
  el.scrollIntoView({behavior:'smooth',block:'nearest'});}));}
// A figure that failed to decode says so in the page instead of leaving a blank box.
window.addEventListener('load',()=>{document.querySelectorAll('figure img').forEach(im=>{
 if(im.naturalWidth>0){im.dataset.decoded=im.naturalWidth;}else{
  const w=document.createElement('p');w.className='missing';w.textContent='This figure could not be decoded.';
  im.after(w);}});});
