from thoughtdesk.cli.main import main

raise SystemExit(main())
