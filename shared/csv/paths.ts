/** Reading and writing a nested member of a plain object by its path of keys. */

type Obj = Record<string, any>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The member at `keys`, or undefined when the path passes through something that is no object. */
export function getPath(obj: Obj, keys: string[]): unknown {
  let o: any = obj;
  for (const k of keys) {
    if (!isObj(o)) return undefined;
    o = o[k];
  }
  return o;
}

/** Sets the member at `keys`, making (or replacing with) objects along the path where there are none. */
export function setPath(obj: Obj, keys: string[], value: unknown): void {
  let o = obj;
  for (const k of keys.slice(0, -1)) o = isObj(o[k]) ? o[k] : (o[k] = {});
  o[keys[keys.length - 1]] = value;
}

/** Removes the member at `keys`, and each object along the path that this leaves empty. */
export function deletePath(obj: Obj, keys: string[]): void {
  const [first, ...rest] = keys;
  if (!Object.hasOwn(obj, first)) return;
  if (rest.length === 0) {
    delete obj[first];
    return;
  }
  const inner = obj[first];
  if (!isObj(inner)) return;
  deletePath(inner, rest);
  if (Object.keys(inner).length === 0) delete obj[first];
}
