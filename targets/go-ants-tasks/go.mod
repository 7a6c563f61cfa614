module corobench/targets/go-ants-tasks

go 1.25.0

require (
	corobench/targets/go-common v0.0.0
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/panjf2000/ants/v2 v2.12.1
)

require golang.org/x/sync v0.22.0 // indirect

replace corobench/targets/go-common => ../go-common
