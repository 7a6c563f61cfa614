package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// checkPod holds a pod spec to what a benchmark needs of it: containers that
// are named and have an image, and Guaranteed QoS with whole CPUs in every
// container (init containers included), without which the static CPU
// manager does not give the pod exclusive CPUs.
func checkPod(spec corev1.PodSpec, where string) []string {
	var problems []string
	if len(spec.Containers) == 0 {
		problems = append(problems, where+".containers: at least one container is required")
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		problems = append(problems, fmt.Sprintf("%s.restartPolicy is %q: a restarted target or generator would measure another trial", where, spec.RestartPolicy))
	}
	volumes := map[string]bool{}
	for _, volume := range spec.Volumes {
		volumes[volume.Name] = true
	}
	groups := map[string][]corev1.Container{"initContainers": spec.InitContainers, "containers": spec.Containers}
	for group, containers := range groups {
		for i, container := range containers {
			at := fmt.Sprintf("%s.%s[%d]", where, group, i)
			problems = append(problems, checkContainer(container, at)...)
			for j, mount := range container.VolumeMounts {
				if !volumes[mount.Name] {
					problems = append(problems, fmt.Sprintf("%s.volumeMounts[%d]: no volume named %q in %s.volumes", at, j, mount.Name, where))
				}
			}
		}
	}
	return problems
}

// checkSecret: a kubernetes.io/tls Secret holds a PEM certificate and the
// private key that goes with it (as `kubectl create secret tls` checks),
// and a ca.crt beside them is a PEM certificate too. Keys may be in data or
// stringData, as the API server merges them.
func checkSecret(secret corev1.Secret) []string {
	if secret.Type != corev1.SecretTypeTLS {
		return nil
	}
	value := func(key string) ([]byte, bool) {
		if text, ok := secret.StringData[key]; ok {
			return []byte(text), true
		}
		data, ok := secret.Data[key]
		return data, ok
	}
	cert, hasCert := value(corev1.TLSCertKey)
	key, hasKey := value(corev1.TLSPrivateKeyKey)
	if !hasCert || !hasKey {
		return []string{"a kubernetes.io/tls Secret needs tls.crt and tls.key"}
	}
	var problems []string
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		problems = append(problems, "tls.crt and tls.key: "+err.Error())
	}
	if ca, ok := value("ca.crt"); ok {
		block, _ := pem.Decode(ca)
		if block == nil || block.Type != "CERTIFICATE" {
			problems = append(problems, "ca.crt is not a PEM certificate")
		} else if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			problems = append(problems, "ca.crt: "+err.Error())
		}
	}
	return problems
}

func checkContainer(container corev1.Container, at string) []string {
	var problems []string
	for _, message := range validation.IsDNS1123Label(container.Name) {
		problems = append(problems, fmt.Sprintf("%s.name %q: %s", at, container.Name, message))
	}
	if container.Image == "" {
		problems = append(problems, at+".image is empty")
	}
	for _, port := range container.Ports {
		for _, message := range validation.IsValidPortNum(int(port.ContainerPort)) {
			problems = append(problems, fmt.Sprintf("%s.ports: %s", at, message))
		}
	}
	return append(problems, checkGuaranteed(container.Resources, at)...)
}

// checkGuaranteed: CPU and memory limits set and equal to the requests, the CPU whole.
func checkGuaranteed(resources corev1.ResourceRequirements, at string) []string {
	var problems []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		limit, hasLimit := resources.Limits[name]
		request, hasRequest := resources.Requests[name]
		switch {
		case !hasLimit:
			problems = append(problems, fmt.Sprintf("%s.resources.limits.%s is missing: the pod would not be Guaranteed", at, name))
		case hasRequest && request.Cmp(limit) != 0:
			problems = append(problems, fmt.Sprintf("%s.resources: %s request %s differs from limit %s: the pod would not be Guaranteed", at, name, request.String(), limit.String()))
		case limit.Sign() <= 0:
			problems = append(problems, fmt.Sprintf("%s.resources.limits.%s must be positive", at, name))
		}
	}
	if cpu, ok := resources.Limits[corev1.ResourceCPU]; ok && cpu.MilliValue()%1000 != 0 {
		problems = append(problems, fmt.Sprintf("%s.resources.limits.cpu %s is not a whole number of CPUs: the static CPU manager would not pin it", at, cpu.String()))
	}
	return problems
}

func checkService(spec corev1.ServiceSpec) []string {
	var problems []string
	if len(spec.Ports) == 0 {
		problems = append(problems, "spec.ports: a Service needs at least one port")
	}
	for i, port := range spec.Ports {
		for _, message := range validation.IsValidPortNum(int(port.Port)) {
			problems = append(problems, fmt.Sprintf("spec.ports[%d].port: %s", i, message))
		}
	}
	return append(problems, checkLabels("spec.selector", spec.Selector)...)
}

// checkJob: an Indexed Job whose every index runs at once, never retried
// (a retried generator would measure another window than its peers).
func checkJob(spec batchv1.JobSpec) []string {
	var problems []string
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		problems = append(problems, "spec.completionMode must be Indexed")
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism || *spec.Completions < 1 {
		problems = append(problems, "spec.completions and spec.parallelism must be set, equal and at least 1: every generator runs at once")
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		problems = append(problems, "spec.backoffLimit must be 0: a retried generator would miss the common window")
	}
	problems = append(problems, checkLabels("spec.template.metadata.labels", spec.Template.Labels)...)
	return append(problems, checkPod(spec.Template.Spec, "spec.template.spec")...)
}
