package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestOrdersAnswersAPageOfJSON(t *testing.T) {
	recorder := httptest.NewRecorder()
	orders(recorder, httptest.NewRequest(http.MethodGet, "/api/orders?from=5&limit=3", nil))
	if recorder.Code != http.StatusOK {
		t.Fatalf("status %d", recorder.Code)
	}
	var got Page
	if err := json.Unmarshal(recorder.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Orders) != 3 || got.Orders[0].ID != 5 || got.Next != 8 {
		t.Fatalf("unexpected page %+v", got)
	}
}

func TestABadLimitIsRefused(t *testing.T) {
	recorder := httptest.NewRecorder()
	orders(recorder, httptest.NewRequest(http.MethodGet, "/api/orders?limit=9999", nil))
	if recorder.Code != http.StatusBadRequest {
		t.Fatalf("status %d", recorder.Code)
	}
}
