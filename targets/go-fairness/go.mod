module corobench/targets/go-fairness

go 1.25.0

require corobench/targets/go-common v0.0.0

replace corobench/targets/go-common => ../go-common
