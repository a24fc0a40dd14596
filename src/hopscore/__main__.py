from hopscore.cli import main

main()
