error: kernel 'softmax': no default partition of 8 elements over 256 threads
