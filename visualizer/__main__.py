from model.command_line import process_exit

from .cli import main

process_exit(main)
