from stabfix.cli import main

main()
