from hopscore.launch import main

main()
