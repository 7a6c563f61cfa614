package main

import (
	"strings"
	"testing"
)

const guaranteedPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"t"},"spec":{"restartPolicy":"Never",
 "containers":[{"name":"serve","image":"i","resources":{"requests":{"cpu":"2","memory":"1Gi"},"limits":{"cpu":"2","memory":"1Gi"}}}]}}`

func expectProblem(t *testing.T, manifest, want string) {
	t.Helper()
	problems := validateDocument([]byte(manifest))
	if !strings.Contains(strings.Join(problems, "\n"), want) {
		t.Fatalf("want a problem containing %q, got %q", want, problems)
	}
}

func TestAGuaranteedPodPasses(t *testing.T) {
	if problems := validateDocument([]byte(guaranteedPod)); len(problems) > 0 {
		t.Fatal(problems)
	}
}

func TestUnknownAndMiscasedFieldsAreRefused(t *testing.T) {
	expectProblem(t, strings.Replace(guaranteedPod, `"image"`, `"Image"`, 1), `unknown field "spec.containers[0].Image"`)
	expectProblem(t, strings.Replace(guaranteedPod, `"restartPolicy"`, `"restartPolicyy"`, 1), "unknown field")
}

func TestWrongTypesAndQuantitiesAreRefused(t *testing.T) {
	expectProblem(t, strings.Replace(guaranteedPod, `"cpu":"2","memory":"1Gi"}}`, `"cpu":"two","memory":"1Gi"}}`, 1), "quantities must match")
}

func TestPodsMustBeGuaranteedWithWholeCPUs(t *testing.T) {
	expectProblem(t, strings.Replace(guaranteedPod, `"limits":{"cpu":"2"`, `"limits":{"cpu":"3"`, 1), "would not be Guaranteed")
	half := strings.ReplaceAll(guaranteedPod, `"cpu":"2"`, `"cpu":"1500m"`)
	expectProblem(t, half, "not a whole number of CPUs")
}

func TestIndexedJobsRunEveryIndexOnceAtOnce(t *testing.T) {
	job := `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"g"},"spec":{"completions":2,"parallelism":1,"backoffLimit":0,
	 "template":{"spec":{"restartPolicy":"Never","containers":[{"name":"load","image":"i","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}}}}`
	expectProblem(t, job, "spec.completionMode must be Indexed")
	expectProblem(t, job, "must be set, equal")
}

func TestUnknownKindsAndListsAreHandled(t *testing.T) {
	expectProblem(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`, "not one this checker knows")
	list := `{"apiVersion":"v1","kind":"List","items":[` + strings.Replace(guaranteedPod, `"name":"t"`, `"name":"Bad_Name"`, 1) + `]}`
	expectProblem(t, list, `items[0]: metadata.name "Bad_Name"`)
}
