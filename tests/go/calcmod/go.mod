module example.com/calcmod

go 1.19
