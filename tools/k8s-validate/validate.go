package main

import (
	"fmt"
	"os"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	strictjson "sigs.k8s.io/json"
)

// validateFile returns every problem found in one manifest file.
func validateFile(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	return validateDocument(data)
}

// validateDocument checks one object, or each item of a v1 List.
func validateDocument(data []byte) []string {
	var header metav1.TypeMeta
	if err := strictjson.UnmarshalCaseSensitivePreserveInts(data, &header); err != nil {
		return []string{"not a JSON object: " + err.Error()}
	}
	if header.APIVersion == "v1" && header.Kind == "List" {
		var list corev1.List
		if problems := decodeStrict(data, &list); len(problems) > 0 {
			return problems
		}
		var problems []string
		for i, item := range list.Items {
			for _, problem := range validateDocument(item.Raw) {
				problems = append(problems, fmt.Sprintf("items[%d]: %s", i, problem))
			}
		}
		return problems
	}
	return validateObject(header, data)
}

// validateObject decodes one object into the type its apiVersion and kind name.
func validateObject(header metav1.TypeMeta, data []byte) []string {
	var problems []string
	switch header.APIVersion + " " + header.Kind {
	case "v1 Pod":
		var pod corev1.Pod
		if problems = decodeStrict(data, &pod); len(problems) == 0 {
			problems = append(checkMeta(pod.ObjectMeta), checkPod(pod.Spec, "spec")...)
		}
	case "v1 Service":
		var service corev1.Service
		if problems = decodeStrict(data, &service); len(problems) == 0 {
			problems = append(checkMeta(service.ObjectMeta), checkService(service.Spec)...)
		}
	case "v1 ConfigMap":
		var configMap corev1.ConfigMap
		if problems = decodeStrict(data, &configMap); len(problems) == 0 {
			problems = checkMeta(configMap.ObjectMeta)
		}
	case "v1 Secret":
		var secret corev1.Secret
		if problems = decodeStrict(data, &secret); len(problems) == 0 {
			problems = append(checkMeta(secret.ObjectMeta), checkSecret(secret)...)
		}
	case "batch/v1 Job":
		var job batchv1.Job
		if problems = decodeStrict(data, &job); len(problems) == 0 {
			problems = append(checkMeta(job.ObjectMeta), checkJob(job.Spec)...)
		}
	default:
		problems = []string{fmt.Sprintf("apiVersion %q kind %q is not one this checker knows", header.APIVersion, header.Kind)}
	}
	return problems
}

// decodeStrict decodes as the API server's strict field validation does:
// field names case-sensitively, unknown and duplicate fields refused.
func decodeStrict(data []byte, into any) []string {
	strictErrors, err := strictjson.UnmarshalStrict(data, into, strictjson.DisallowUnknownFields)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, strictError := range strictErrors {
		problems = append(problems, strictError.Error())
	}
	return problems
}

func checkMeta(meta metav1.ObjectMeta) []string {
	var problems []string
	for _, message := range validation.IsDNS1123Subdomain(meta.Name) {
		problems = append(problems, fmt.Sprintf("metadata.name %q: %s", meta.Name, message))
	}
	if meta.Namespace != "" {
		for _, message := range validation.IsDNS1123Label(meta.Namespace) {
			problems = append(problems, fmt.Sprintf("metadata.namespace %q: %s", meta.Namespace, message))
		}
	}
	problems = append(problems, checkLabels("metadata.labels", meta.Labels)...)
	for key := range meta.Annotations {
		for _, message := range validation.IsQualifiedName(key) {
			problems = append(problems, fmt.Sprintf("metadata.annotations key %q: %s", key, message))
		}
	}
	return problems
}

func checkLabels(where string, labels map[string]string) []string {
	var problems []string
	for key, value := range labels {
		for _, message := range validation.IsQualifiedName(key) {
			problems = append(problems, fmt.Sprintf("%s key %q: %s", where, key, message))
		}
		for _, message := range validation.IsValidLabelValue(value) {
			problems = append(problems, fmt.Sprintf("%s[%q] value %q: %s", where, key, value, message))
		}
	}
	return problems
}
