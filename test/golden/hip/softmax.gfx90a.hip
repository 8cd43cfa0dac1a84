tilec: error: kernel 'softmax': reduce is not lowered yet
