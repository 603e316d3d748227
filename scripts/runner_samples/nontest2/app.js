const unused = 1
function add(a,b){return a+b}
