from perfalign.cli.main import main

main()
