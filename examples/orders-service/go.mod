module example.com/orders-service

go 1.22
