module 0.mosh/early

go 1.26.0
