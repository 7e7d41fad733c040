import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findDuplicateJsonKey } from "./duplicate-json-key.js";

describe("findDuplicateJsonKey", () => {
  it("names a key given twice in the same object, with its path", () => {
    expect(findDuplicateJsonKey('{"actions": [1], "stops": [], "actions": [2]}')).toBe("actions");
    expect(findDuplicateJsonKey('{"actions": [{"id": "A1", "target": "staging", "target": "prod"}]}')).toBe("actions[0].target");
    expect(findDuplicateJsonKey('{"a": {"b": 1}, "c": [{"x": 1}, {"x": 2, "y": {"z": 1, "z": 2}}]}')).toBe("c[1].y.z");
  });

  it("finds nothing where equal keys sit in different objects, or in strings", () => {
    expect(findDuplicateJsonKey('{"a": {"id": 1}, "b": {"id": 2}, "s": "\\"id\\": 3, \\"id\\": 4"}')).toBeUndefined();
    expect(findDuplicateJsonKey("[1, true, null, -2.5e3]")).toBeUndefined();
  });

  it("finds a duplicate in any JSON that has one, and none in what JSON.stringify writes", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(findDuplicateJsonKey(text)).toBeUndefined();
        if (value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0) {
          const key = Object.keys(value)[0] as string;
          expect(findDuplicateJsonKey(`${text.slice(0, -1)},${JSON.stringify(key)}:0}`)).toBe(key);
        }
      }),
      { numRuns: 500 },
    );
  });
});
