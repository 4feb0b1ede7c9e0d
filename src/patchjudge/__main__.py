from patchjudge.cli import main

raise SystemExit(main())
