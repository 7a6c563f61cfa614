package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
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
	expectProblem(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`, "not one this checker knows")
	list := `{"apiVersion":"v1","kind":"List","items":[` + strings.Replace(guaranteedPod, `"name":"t"`, `"name":"Bad_Name"`, 1) + `]}`
	expectProblem(t, list, `items[0]: metadata.name "Bad_Name"`)
}

func TestMountsMustNameAVolumeOfThePod(t *testing.T) {
	mounted := strings.Replace(guaranteedPod, `"image":"i",`, `"image":"i","volumeMounts":[{"name":"tls","mountPath":"/tls","readOnly":true}],`, 1)
	expectProblem(t, mounted, `no volume named "tls"`)
	withVolume := strings.Replace(mounted, `"restartPolicy":"Never",`, `"restartPolicy":"Never","volumes":[{"name":"tls","secret":{"secretName":"s"}}],`, 1)
	if problems := validateDocument([]byte(withVolume)); len(problems) > 0 {
		t.Fatal(problems)
	}
}

func TestTLSSecretsHoldACertificateAndItsKey(t *testing.T) {
	expectProblem(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"kubernetes.io/tls","stringData":{"tls.crt":"x"}}`, "needs tls.crt and tls.key")
	expectProblem(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"kubernetes.io/tls","stringData":{"tls.crt":"x","tls.key":"y"}}`, "tls.crt and tls.key: ")
	expectProblem(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"kubernetes.io/tls","strinData":{}}`, "unknown field")
	if problems := validateDocument([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"Opaque","stringData":{"a":"b"}}`)); len(problems) > 0 {
		t.Fatal(problems)
	}
}

// A self-signed certificate and its PKCS#8 key, in PEM, as rcgen writes them.
func selfSigned(t *testing.T) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"corobench-target"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPem := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	return string(cert), string(keyPem)
}

func TestATLSSecretWithItsKeyAndAuthorityPasses(t *testing.T) {
	cert, key := selfSigned(t)
	data, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "corobench-tls"},
		"type":       "kubernetes.io/tls",
		"stringData": map[string]string{"tls.crt": cert, "tls.key": key, "ca.crt": cert},
	})
	if err != nil {
		t.Fatal(err)
	}
	if problems := validateDocument(data); len(problems) > 0 {
		t.Fatal(problems)
	}
	otherCert, _ := selfSigned(t)
	mismatched := strings.Replace(string(data), `"tls.crt":`+jsonString(t, cert), `"tls.crt":`+jsonString(t, otherCert), 1)
	expectProblem(t, mismatched, "tls.crt and tls.key: ")
	expectProblem(t, strings.Replace(string(data), `"ca.crt":`+jsonString(t, cert), `"ca.crt":"none"`, 1), "ca.crt is not a PEM certificate")
}

func jsonString(t *testing.T, text string) string {
	t.Helper()
	quoted, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	return string(quoted)
}
