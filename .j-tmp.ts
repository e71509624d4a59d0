import { jsonErrorOffset } from '/work/main/src/contract/manifest/json-location.js';
import fc from '/work/main/node_modules/fast-check/lib/fast-check.js';
let bad = 0;
const check = (t: string) => { let ok = true; try { JSON.parse(t); } catch { ok = false; } const off = jsonErrorOffset(t); if ((off < 0) !== ok) { bad++; if (bad < 10) console.log(JSON.stringify(t), ok, off); } };
fc.assert(fc.property(fc.json(), (t) => { check(t); }), { numRuns: 20000 });
fc.assert(fc.property(fc.json(), fc.nat(), fc.string({maxLength: 2}), (t, p, ins) => { const k = p % (t.length + 1); check(t.slice(0, k) + ins + t.slice(k)); check(t.slice(0,k)); check(t.slice(0,k) + t.slice(k+1)); }), { numRuns: 50000 });
fc.assert(fc.property(fc.string({unit: fc.constantFrom('{','}','[',']',',',':','"','\\','1','-','.','e','t','r','u','n','l',' ','\n','a','0','E','+')}), (t) => { check(t); }), { numRuns: 100000 });
console.log('mismatches', bad);
