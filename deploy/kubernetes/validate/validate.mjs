// Validates every object of the rendered manifests offline, with zero errors allowed:
//  - Kubernetes built-in kinds with kubernetes-models (the published OpenAPI schemas, ajv);
//  - ServiceMonitor / PodMonitor with @kubernetes-models/prometheus-operator (its CRD schemas);
//  - HTTPRoute with @kubernetes-models/gateway-api (the Gateway API CRD schemas);
//  - InferencePool against the openAPIV3Schema of GIE v1.6.0's CRD (schemas/inferencepool-v1.json,
//    with its source and licence), plus the CRD's one CEL rule, checked here by hand.
// Usage: node validate.mjs [file.yaml ...] (default: ../rendered/*.yaml). Exits 1 on any error.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const here = dirname(fileURLToPath(import.meta.url));
const renderedDir = join(here, "..", "rendered");
const files = process.argv.length > 2
  ? process.argv.slice(2)
  : readdirSync(renderedDir).filter((f) => f.endsWith(".yaml")).map((f) => join(renderedDir, f));

const CORE_GROUPS = new Set(["apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io",
  "networking.k8s.io", "coordination.k8s.io", "apiextensions.k8s.io", "storage.k8s.io"]);

function modulePath(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (group === "") return `kubernetes-models/${version}/${kind}`;
  if (CORE_GROUPS.has(group)) return `kubernetes-models/${group}/${version}/${kind}`;
  if (group === "monitoring.coreos.com") {
    return `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`;
  }
  if (group === "gateway.networking.k8s.io") {
    return `@kubernetes-models/gateway-api/${group}/${version}/${kind}`;
  }
  return null;
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat("int32", { type: "number", validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat("int64", { type: "number", validate: (n) => Number.isInteger(n) });
const crdValidators = {
  "inference.networking.k8s.io/v1/InferencePool": (() => {
    const schema = JSON.parse(readFileSync(join(here, "schemas", "inferencepool-v1.json"), "utf8"));
    delete schema.$comment;
    const check = ajv.compile(schema);
    return (obj) => {
      const errors = check(obj) ? [] : check.errors.map((e) => `${e.instancePath} ${e.message}`);
      // x-kubernetes-validations of endpointPickerRef: self.kind != 'Service' || has(self.port)
      const ref = obj.spec?.endpointPickerRef;
      if (ref && (ref.kind ?? "Service") === "Service" && ref.port === undefined) {
        errors.push("/spec/endpointPickerRef port is required when kind is 'Service'");
      }
      return errors;
    };
  })(),
};

let objects = 0;
let failures = 0;
for (const file of files) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  for (const doc of docs) {
    if (doc.errors.length) {
      console.log(`FAIL ${file}: YAML ${doc.errors.map(String).join("; ")}`);
      failures++;
      continue;
    }
    const obj = doc.toJS();
    if (obj == null) continue;
    objects++;
    const id = `${file.split("/").pop()} ${obj.apiVersion} ${obj.kind} ${obj.metadata?.name}`;
    let errors;
    const crd = crdValidators[`${obj.apiVersion}/${obj.kind}`];
    if (crd) {
      errors = crd(obj);
    } else {
      const path = modulePath(obj.apiVersion, obj.kind);
      if (!path) {
        console.log(`FAIL ${id}: no schema known for this kind`);
        failures++;
        continue;
      }
      let Model;
      try {
        Model = (await import(path))[obj.kind];
      } catch (e) {
        console.log(`FAIL ${id}: no schema module ${path} (${e.message})`);
        failures++;
        continue;
      }
      try {
        new Model(obj).validate();
        errors = [];
      } catch (e) {
        errors = [e.message];
      }
    }
    if (errors.length) {
      failures++;
      console.log(`FAIL ${id}:\n  ${errors.join("\n  ")}`);
    } else {
      console.log(`ok   ${id}`);
    }
  }
}
console.log(`${objects - failures} passed, ${failures} failed`);
process.exit(failures === 0 && objects > 0 ? 0 : 1);
